helm upgrade --install --namespace @NAMESPACE@ "${HELM_LABELS[@]}" ${HELM_TAKE[@]+"${HELM_TAKE[@]}"} ${HELM_WAIT[@]+"${HELM_WAIT[@]}"} -- @RELEASE@ @CHART@
