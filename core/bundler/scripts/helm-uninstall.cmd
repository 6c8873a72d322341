helm uninstall --namespace @NAMESPACE@ --ignore-not-found -- @RELEASE@
