package scenarios

import _ "embed"

// DemoFilename names Demo in error messages.
const DemoFilename = "demo.yml"

// Demo is the scenario `inferprobe demo` runs against the bundled simulator;
// the demo command replaces its URLs with the simulator's address.
//
//go:embed demo.yml
var Demo []byte
