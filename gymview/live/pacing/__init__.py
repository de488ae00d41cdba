"""How many frames a loop may make and send: the fps limit and the overhead budget (with the CPUs the
process may use), the process-wide message budget, and flow control by the pages' acks."""
