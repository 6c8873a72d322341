printf '%s\n' @NAMESPACE_DOCUMENT@ | delete_documents
