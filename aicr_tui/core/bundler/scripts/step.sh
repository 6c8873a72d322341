
_step_@NUMBER@() {
@COMMANDS@
}
step @NUMBER@ @STEP_NAME@ @BANNER@ _step_@NUMBER@
