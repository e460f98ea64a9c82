package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
)

// detectLimit bounds the first line Detect reads.
const detectLimit = 1 << 20

// Detect is the format of the JSON-lines file at path, for a file given
// without one, as AIPerf infers it from the first non-empty line's keys: a
// multi-turn entry has turns, a Mooncake trace entry input_length, hash_ids
// or text_input, and anything else is read as single-turn (whose reader
// then says what a line lacks). A file that cannot be read is single-turn
// too: reading it says why.
func Detect(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return FormatSingleTurn
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, detectLimit)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var keys map[string]json.RawMessage
		if json.Unmarshal(line, &keys) != nil {
			return FormatSingleTurn
		}
		has := func(names ...string) bool {
			for _, n := range names {
				if _, ok := keys[n]; ok {
					return true
				}
			}
			return false
		}
		switch {
		case has("turns"):
			return FormatMultiTurn
		case has("input_length", "hash_ids", "text_input"):
			return FormatMooncake
		}
		return FormatSingleTurn
	}
	return FormatSingleTurn
}
