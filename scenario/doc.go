// Package scenario defines toll's scenario file: the services a run starts,
// the variants it compares, the load it drives and the schedule it follows.
//
// Read reads a YAML file, fills in defaults and validates it. Every error it
// returns names the file, the line and the field, as "file:line: field: what",
// so a user can jump straight to the mistake.
//
// Strings in a scenario may hold placeholders that toll fills in at run time,
// per variant: ${port:NAME} (a free TCP port on loopback, the same wherever NAME
// appears within one variant), ${sink} (the URL of toll's telemetry receiver),
// ${sink_addr} (its host:port, for agents that take an address, not a URL),
// ${toll} (the path of the running toll binary) and ${variant}. A command whose
// first word is "toll" runs the same toll binary.
package scenario
