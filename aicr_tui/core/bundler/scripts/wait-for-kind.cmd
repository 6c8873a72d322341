wait_for_kind @GROUP_VERSION@ @KIND@
