package simulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// maxProfileBody bounds an admin request body; a profile is a few hundred bytes.
const maxProfileBody = 64 << 10

func (s *Server) getProfile(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Profile())
}

// updateProfile applies a partial profile: the fields present override the
// current ones. This is how a test injects a latency regression.
func (s *Server) updateProfile(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxProfileBody))
	if err != nil {
		if tooBig := (*http.MaxBytesError)(nil); errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "", fmt.Sprintf("profile body larger than %d bytes", tooBig.Limit))
			return
		}
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "reading body: "+err.Error())
		return
	}

	old, p, err := s.patchProfile(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "invalid profile: "+err.Error())
		return
	}
	s.logger.Info("simulator profile changed", "old", old, "new", p, "remote", r.RemoteAddr)
	writeJSON(w, http.StatusOK, p)
}

// patchProfile decodes a partial profile over the current one and, when
// the result is valid, makes it current.
func (s *Server) patchProfile(patch []byte) (old, p Profile, err error) {
	s.updateMu.Lock()
	defer s.updateMu.Unlock()
	old = s.Profile()
	p = old
	if err := json.Unmarshal(patch, &p); err != nil {
		return old, p, err
	}
	if err := s.setProfileLocked(p); err != nil {
		return old, p, err
	}
	return old, s.Profile(), nil
}
