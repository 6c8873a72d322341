helm upgrade --install --version @VERSION@ --namespace @NAMESPACE@ --create-namespace --skip-crds @OPTIONS@ "${HELM_LABELS[@]}" ${HELM_WAIT[@]+"${HELM_WAIT[@]}"} -- @RELEASE@ @CHART@
