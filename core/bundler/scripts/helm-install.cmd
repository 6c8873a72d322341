helm upgrade --install --version @VERSION@ --namespace @NAMESPACE@ --create-namespace @OPTIONS@ --wait -- @RELEASE@ @CHART@
