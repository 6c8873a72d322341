ensure_namespace @NAMESPACE_DOCUMENT@
