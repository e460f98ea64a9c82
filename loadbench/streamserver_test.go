package loadbench

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

// streamServerArg, as the test binary's first argument, makes it the
// stream server (see serveStreams) instead of running tests.
const streamServerArg = "streamserver"

// The stream server is an OpenAI chat endpoint built to cost as little CPU
// per chunk as a server can, so that a capacity measurement finds the
// client's limit and not the server's: the built-in simulator spends about
// as much CPU per chunk as inferprobe does (a timer and a flush per token),
// so on a shared machine it would saturate first. Here one goroutine steps
// a timing wheel of 1 ms slots and writes every chunk due in a slot with one
// write system call per stream on the raw connection (HTTP/1.1, chunked
// encoding, keep-alive); a connection's own goroutine only reads requests.
// Streams started in different milliseconds keep their phase, so arrivals
// spread over each inter-token gap as they do behind a fleet of engines.
const (
	wheelTick  = time.Millisecond
	wheelSlots = 4096 // ticks: TTFT and ITL must both be shorter
)

// serveStreams is the stream server process: it listens on 127.0.0.1, prints
// its address on stdout, and serves until it is killed. Every request gets
// a stream of max_completion_tokens (or max_tokens) content chunks (or -tokens when the body has none),
// the first after -ttft and then one every -itl, then a finish chunk, a usage
// chunk and [DONE].
func serveStreams(args []string) int {
	fs := flag.NewFlagSet(streamServerArg, flag.ContinueOnError)
	ttft := fs.Duration("ttft", 200*time.Millisecond, "time to first token")
	itl := fs.Duration("itl", 20*time.Millisecond, "inter-token latency")
	tokens := fs.Int("tokens", 256, "output tokens when a request sets no max_tokens")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *ttft >= wheelSlots*wheelTick || *itl >= wheelSlots*wheelTick || *itl < wheelTick {
		fmt.Fprintf(os.Stderr, "-ttft and -itl must be under %v and -itl at least %v\n", wheelSlots*wheelTick, wheelTick)
		return 2
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(l.Addr().String())
	w := newWheel(*ttft, *itl)
	go w.run()
	for {
		c, err := l.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		go serveConn(c, w, *tokens)
	}
}

const (
	sseHeader = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
	chunkHead = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":0,"model":"` + streamServerModel + `","choices":[`
	// streamServerModel is the model the stream server answers for.
	streamServerModel = "loadbench"
)

// httpChunk frames event as one HTTP/1.1 chunk.
func httpChunk(event string) []byte {
	return fmt.Appendf(nil, "%x\r\n%s\r\n", len(event), event)
}

var (
	prelude = httpChunk(chunkHead + `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	token   = httpChunk(chunkHead + `{"index":0,"delta":{"content":" tok"},"logprobs":null,"finish_reason":null}]}` + "\n\n")
)

// ending is what follows a stream's last token: finish, usage, [DONE] and
// the last HTTP chunk, in one write.
func ending(promptTokens, tokens int) []byte {
	var b []byte
	b = append(b, httpChunk(chunkHead+`{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}]}`+"\n\n")...)
	b = append(b, httpChunk(fmt.Sprintf(`%s],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n",
		chunkHead, promptTokens, tokens, promptTokens+tokens))...)
	b = append(b, httpChunk("data: [DONE]\n\n")...)
	return append(b, "0\r\n\r\n"...)
}

// serveConn reads requests from c one after another and hands each stream
// to the wheel, waiting for it to end before reading the next.
func serveConn(c net.Conn, w *wheel, defaultTokens int) {
	defer c.Close()
	br := bufio.NewReader(c)
	done := make(chan bool, 1)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return
		}
		if req.Method != http.MethodPost {
			b := `{"object":"list","data":[{"id":"` + streamServerModel + `","object":"model"}]}`
			if _, err := fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(b), b); err != nil {
				return
			}
			continue
		}
		n := intField(body, `"max_completion_tokens":`)
		if n <= 0 {
			n = intField(body, `"max_tokens":`)
		}
		if n <= 0 {
			n = defaultTokens
		}
		if _, err := c.Write(append([]byte(sseHeader), prelude...)); err != nil {
			return
		}
		// The prompt's words stand in for its tokens, as the simulator counts.
		w.add(&stream{conn: c, left: n, end: ending(len(bytes.Fields(body)), n), done: done})
		if !<-done {
			return
		}
	}
}

// intField is the integer after key in body, or 0.
func intField(body []byte, key string) int {
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return 0
	}
	rest := bytes.TrimLeft(body[i+len(key):], " ")
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	n, _ := strconv.Atoi(string(rest[:j]))
	return n
}

type stream struct {
	conn net.Conn
	left int    // tokens still to send
	end  []byte // written after the last token
	done chan bool
}

// wheel sends every stream's chunks from one goroutine.
type wheel struct {
	ttft, itl int // in ticks
	start     time.Time

	mu       sync.Mutex
	incoming []*stream
	slots    [wheelSlots][]*stream
}

func newWheel(ttft, itl time.Duration) *wheel {
	return &wheel{ttft: int(ttft / wheelTick), itl: int(itl / wheelTick), start: time.Now()}
}

func (w *wheel) add(s *stream) {
	w.mu.Lock()
	w.incoming = append(w.incoming, s)
	w.mu.Unlock()
}

// run steps the wheel every tick, catching up on ticks it woke too late for.
func (w *wheel) run() {
	var incoming []*stream
	next := 0 // the next tick to process
	for {
		now := int(time.Since(w.start) / wheelTick)
		w.mu.Lock()
		incoming, w.incoming = w.incoming, incoming[:0]
		w.mu.Unlock()
		for _, s := range incoming {
			w.schedule(s, now+max(w.ttft, 1))
		}
		for ; next <= now; next++ {
			slot := &w.slots[next%wheelSlots]
			due := *slot
			*slot = nil
			for _, s := range due {
				w.step(s, next)
			}
			if *slot == nil { // give the emptied slice back to the slot
				*slot = due[:0]
			}
		}
		time.Sleep(time.Until(w.start.Add(time.Duration(next) * wheelTick)))
	}
}

func (w *wheel) schedule(s *stream, tick int) {
	slot := &w.slots[tick%wheelSlots]
	*slot = append(*slot, s)
}

// step sends s its next token at tick, or its ending after the last one.
func (w *wheel) step(s *stream, tick int) {
	if _, err := s.conn.Write(token); err != nil {
		s.done <- false
		return
	}
	if s.left--; s.left > 0 {
		w.schedule(s, tick+w.itl)
		return
	}
	_, err := s.conn.Write(s.end)
	s.done <- err == nil
}
