chart_crds @OPTIONS@ -- @CHART@
