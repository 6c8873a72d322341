kubectl delete --ignore-not-found -f @FILE@
