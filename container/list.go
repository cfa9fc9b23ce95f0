package container

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Container is a container toll labelled, as the engine lists it.
type Container struct {
	// ID and Name identify it; Image is what it runs.
	ID, Name, Image string
	// State is the engine's word for it: running, exited, created…
	State string
	// Labels are its labels.
	Labels map[string]string
}

// List returns every container, running or not, that carries label key
// (with any value).
func (e *Engine) List(ctx context.Context, key string) ([]Container, error) {
	if e.Name == Podman {
		out, err := e.ask(ctx, "ps", "--all", "--filter", "label="+key, "--format", "json")
		if err != nil {
			return nil, err
		}
		return parsePodmanPS([]byte(out))
	}
	out, err := e.ask(ctx, "ps", "--all", "--no-trunc", "--filter", "label="+key, "--format", "{{json .}}")
	if err != nil {
		return nil, err
	}
	return parseDockerPS([]byte(out))
}

// parsePodmanPS parses `podman ps --format json`: one JSON array.
func parsePodmanPS(b []byte) ([]Container, error) {
	var rows []struct {
		ID     string `json:"Id"`
		Names  []string
		Image  string
		State  string
		Labels map[string]string
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(b, &rows); err != nil {
		return nil, fmt.Errorf("podman ps: %w", err)
	}
	var out []Container
	for _, r := range rows {
		c := Container{ID: r.ID, Image: r.Image, State: r.State, Labels: r.Labels}
		if len(r.Names) > 0 {
			c.Name = r.Names[0]
		}
		out = append(out, c)
	}
	return out, nil
}

// parseDockerPS parses `docker ps --format '{{json .}}'`: one JSON object a
// line, with the labels as "k=v,k=v".
func parseDockerPS(b []byte) ([]Container, error) {
	var out []Container
	for line := range strings.Lines(string(b)) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var r struct {
			ID, Names, Image, State, Labels string
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("docker ps: %w", err)
		}
		c := Container{ID: r.ID, Name: r.Names, Image: r.Image, State: r.State, Labels: map[string]string{}}
		for kv := range strings.SplitSeq(r.Labels, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				c.Labels[k] = v
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
