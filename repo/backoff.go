package repo

import "time"

// Backoff spaces out retries after consecutive failures: Initial, then
// multiplied by Factor per failure, capped at Max.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
	Factor  float64
}

// DefaultBackoff retries after 1s, 2s, 4s, ... up to 5 minutes.
func DefaultBackoff() Backoff {
	return Backoff{Initial: time.Second, Max: 5 * time.Minute, Factor: 2}
}

// Delay is the wait after the given number of consecutive failures (>= 1).
func (b Backoff) Delay(failures int) time.Duration {
	b = b.withDefaults()
	d := float64(b.Initial)
	for i := 1; i < failures && d < float64(b.Max); i++ {
		d *= b.Factor
	}
	return min(time.Duration(d), b.Max)
}

func (b Backoff) withDefaults() Backoff {
	def := DefaultBackoff()
	if b.Initial <= 0 {
		b.Initial = def.Initial
	}
	if b.Max <= 0 {
		b.Max = max(def.Max, b.Initial)
	}
	if b.Factor < 1 {
		b.Factor = def.Factor
	}
	return b
}
