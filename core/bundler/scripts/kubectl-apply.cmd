kubectl apply -f @FILE@
