package scenarios_test

// The prober registers the endpoint types. Linked into this test binary
// (built against the test variant of scenarios), its registrations are
// what the package's internal tests validate against.
import _ "github.com/inferprobe/inferprobe/prober"
