package sse_test

import (
	"bytes"
	"fmt"
	"time"

	"github.com/inferprobe/inferprobe/prober/sse"
)

func ExampleReader() {
	body := bytes.NewBufferString(": keepalive\n\n" +
		"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n" +
		"data: [DONE]\n\n")
	r := sse.NewReader(body, time.Now, 1<<20)
	var ev sse.Event
	for {
		if err := r.Next(&ev); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s\n", ev.Data)
	}
	// Output:
	// {"choices":[{"delta":{"content":"Hi"}}]}
	// [DONE]
	// EOF
}
