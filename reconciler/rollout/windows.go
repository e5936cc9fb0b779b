package rollout

import (
	"slices"
	"time"

	"github.com/regatta-dev/regatta/spec"
)

// inWindows reports whether now is inside any window; no windows is
// always.
func inWindows(ws []spec.RolloutWindow, now time.Time) bool {
	return inAny(ws, locations(ws), now)
}

// locations resolves each window's time zone once (UTC when unset).
func locations(ws []spec.RolloutWindow) []*time.Location {
	out := make([]*time.Location, len(ws))
	for i, w := range ws {
		out[i] = time.UTC
		if w.TimeZone != "" {
			if l, err := time.LoadLocation(w.TimeZone); err == nil { // validated by spec
				out[i] = l
			}
		}
	}
	return out
}

func inAny(ws []spec.RolloutWindow, locs []*time.Location, now time.Time) bool {
	if len(ws) == 0 {
		return true
	}
	for i, w := range ws {
		if inWindowAt(w, locs[i], now) {
			return true
		}
	}
	return false
}

func inWindow(w spec.RolloutWindow, now time.Time) bool {
	return inWindowAt(w, locations([]spec.RolloutWindow{w})[0], now)
}

func inWindowAt(w spec.RolloutWindow, loc *time.Location, now time.Time) bool {
	t := now.In(loc)
	start, end := 0, 24*60
	if w.Hours != "" {
		start, end, _ = spec.ParseHours(w.Hours) // validated by spec
	}
	m := t.Hour()*60 + t.Minute()
	today := dayOK(w, t.Weekday())
	if start < end {
		return today && m >= start && m < end
	}
	yesterday := dayOK(w, (t.Weekday()+6)%7)
	return (today && m >= start) || (yesterday && m < end)
}

func dayOK(w spec.RolloutWindow, d time.Weekday) bool {
	return len(w.Days) == 0 || slices.Contains(w.Days, spec.Weekdays[d])
}

// nextOpening is the first minute after now inside a window, looking a
// week and a day ahead; zero when none opens.
func nextOpening(ws []spec.RolloutWindow, now time.Time) time.Time {
	locs := locations(ws)
	t := now.Truncate(time.Minute)
	for i := 0; i < 8*24*60; i++ {
		t = t.Add(time.Minute)
		if inAny(ws, locs, t) {
			return t
		}
	}
	return time.Time{}
}
