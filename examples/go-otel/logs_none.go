//go:build !otellogs

package main

import (
	"context"
	"errors"
	"net/http"
)

// logged refuses: this build has no log SDK (build.sh VERSION logs builds
// one that has).
func logged(context.Context, http.Handler) (http.Handler, func(), error) {
	return nil, nil, errors.New("--logs otel: this binary was built without the SDK's logs (bash build.sh VERSION logs)")
}
