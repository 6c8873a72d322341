delete_created_namespace @NAMESPACE@ @NAMESPACE_DOCUMENT@
