helm upgrade --install --namespace @NAMESPACE@ --create-namespace "${HELM_LABELS[@]}" ${HELM_WAIT[@]+"${HELM_WAIT[@]}"} -- @RELEASE@ @CHART@
