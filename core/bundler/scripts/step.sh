
printf '%s\n' @BANNER@
@COMMANDS@
