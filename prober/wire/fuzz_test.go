package wire

import (
	"bytes"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the frame reader and to the decoder of
// each frame type: no input may panic or allocate beyond its frame's bound,
// and a record that decodes must encode back to the same record.
func FuzzDecode(f *testing.F) {
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	_ = enc.Hello(Hello{Version: Version, PID: 1})
	_ = enc.Record(1, sampleRecord(3))
	_ = enc.Heartbeat(Heartbeat{InFlight: 1, CPU: 1e9, SchedLatencyP99: 1e5})
	_ = enc.Ready(Ready{Target: 2, Err: "cannot build"})
	_ = enc.Flush()
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := NewDecoder(bytes.NewReader(data))
		for {
			typ, err := dec.Next()
			if err != nil {
				return
			}
			switch typ {
			case TypeHello:
				_, _ = dec.Hello()
			case TypeTarget:
				_, _ = dec.Target()
			case TypeCredit:
				_, _ = dec.Credit()
			case TypeCancel:
				_, _ = dec.Cancel()
			case TypeShutdown:
				_ = dec.Shutdown()
			case TypeHeartbeat:
				_, _ = dec.Heartbeat()
			case TypeReady:
				_, _ = dec.Ready()
			case TypeRecord:
				id, rec, err := dec.Record()
				if err != nil {
					continue
				}
				var again bytes.Buffer
				enc := NewEncoder(&again)
				if err := enc.Record(id, rec); err != nil {
					t.Fatalf("re-encoding a decoded record: %v", err)
				}
				_ = enc.Flush()
				d2 := NewDecoder(&again)
				if _, err := d2.Next(); err != nil {
					t.Fatal(err)
				}
				id2, rec2, err := d2.Record()
				if err != nil || id2 != id || !recordsEqual(rec, rec2) {
					t.Fatalf("record did not survive a round trip: %v\n%+v\n%+v", err, rec, rec2)
				}
			}
		}
	})
}
