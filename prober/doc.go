// Package prober sends a scenario's requests on their schedule and times
// each into a record. It has three concerns:
//
//   - The API's semantics: an endpoint type (endpoint.go, and one
//     endpoint_NAME.go each, registered in its init) builds a request's body
//     and reads its reply; stream.go reads a reply's event stream
//     (prober/sse) or single body, chunk by chunk, into a record's content
//     chunks and usage.
//   - The transport: Client sends a request and takes its timestamps
//     (client.go, phases.go), over net/http or, for plain HTTP and HTTPS
//     without HTTP/2, the one-goroutine HTTP/1.1 client of
//     prober/internal/http1 (client_h1.go); conn.go proves that a request
//     which met a stale keep-alive connection never reached its server, so
//     that it is sent again, once; preopen.go opens connections ahead of a
//     probe's requests.
//   - The scheduler: Probe plans a probe's requests — arrival offsets
//     (prober/arrival), prompts (prober/dataset), bodies — and sends them
//     to an Executor on time, in an open loop (open_loop.go), a closed one
//     (closed_loop.go), a replay (replay.go) or multi-turn sessions
//     (session.go). The Executor is a Client in process, or prober/pool's
//     worker processes.
//
// What a measured request is — Record, Outcome, Reason, Phases, RequestID,
// the probe's Digest, Shard, and their encodings — is package record's:
// the readers of records (report, collector) import it, never this
// package. The request path, with the one place each timestamp is taken,
// is in docs/architecture.md.
package prober
