helm upgrade --install --version @VERSION@ --namespace @NAMESPACE@ --skip-crds @OPTIONS@ "${HELM_LABELS[@]}" ${HELM_TAKE[@]+"${HELM_TAKE[@]}"} ${HELM_WAIT[@]+"${HELM_WAIT[@]}"} -- @RELEASE@ @CHART@
