kubectl apply --server-side -f @FILE@
