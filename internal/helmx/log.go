package helmx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"time"
)

// helmLog turns Helm's printf-style debug log into slog records at Debug level.
//
// Helm passes whole objects to its log in places (a release Secret whose
// payload holds the values, for one), so only scalars, durations and errors
// are formatted; every other argument is replaced by its type, e.g.
// "<redacted *v1.Secret>". The message therefore never contains values.
func helmLog(l *slog.Logger, namespace string) func(string, ...any) {
	return func(format string, args ...any) {
		if !l.Enabled(context.Background(), slog.LevelDebug) {
			return
		}
		l.Debug(redactf(format, args...), "source", "helm", "namespace", namespace)
	}
}

// redactf formats like fmt.Sprintf, with every argument that could carry
// release content replaced by a placeholder naming its type.
func redactf(format string, args ...any) string {
	safe := make([]any, len(args))
	for i, a := range args {
		safe[i] = redactArg(a)
	}
	return strings.TrimSpace(fmt.Sprintf(format, safe...))
}

func redactArg(a any) any {
	switch v := a.(type) {
	case nil:
		return nil
	case time.Duration, time.Time:
		return v
	case error:
		return v.Error()
	case []error:
		return errors.Join(v...).Error()
	}
	switch reflect.TypeOf(a).Kind() {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return a
	}
	return fmt.Sprintf("<redacted %T>", a)
}

// warningLogger sends API server warnings (deprecated APIs and the like) to
// the logger instead of client-go's default, which writes to stderr.
type warningLogger struct{ l *slog.Logger }

func (w warningLogger) HandleWarningHeader(code int, agent, text string) {
	if code != 299 || text == "" {
		return
	}
	w.l.Warn("kubernetes API warning", "source", "helm", "warning", text)
}
