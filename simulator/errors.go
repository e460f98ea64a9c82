package simulator

import (
	"encoding/json"
	"net/http"
)

// apiError is the OpenAI error body, which vLLM and most servers copy.
type apiError struct {
	Error apiErrorBody `json:"error"`
}

type apiErrorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    int     `json:"code"`
}

// writeError answers with an OpenAI error body; param names the offending
// request field, or is "" (null) when there is none.
func writeError(w http.ResponseWriter, status int, typ, param, msg string) {
	body := apiErrorBody{Message: msg, Type: typ, Code: status}
	if param != "" {
		body.Param = &param
	}
	writeJSON(w, status, apiError{Error: body})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// An encoding error here can only be a write error: the client is gone.
	_ = json.NewEncoder(w).Encode(v)
}
