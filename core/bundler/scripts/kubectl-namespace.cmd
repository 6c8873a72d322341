kubectl create namespace --dry-run=client -o yaml -- @NAMESPACE@ | kubectl apply -f -
