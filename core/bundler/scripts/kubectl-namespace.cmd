printf '%s\n' @NAMESPACE_DOCUMENT@ | kubectl apply -f -
