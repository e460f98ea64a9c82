package prober

// KeepAliveProbation is how long a server's first connection is watched
// before connections to it are reused (conn.go).
const KeepAliveProbation = keepAliveProbation
