package spec

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// checkRollout validates spec.rollout of a profile.
func checkRollout(ro *Rollout, rep report) {
	if ro == nil {
		return
	}
	checkMaxUpdate(rep, "spec.rollout.maxUpdate", ro.MaxUpdate)
	if ro.FailureThreshold != nil && *ro.FailureThreshold < 1 {
		rep.errorf("spec.rollout.failureThreshold", "must be 1 or more, got %d", *ro.FailureThreshold)
	}
	if ro.Stages != nil && len(ro.Stages) == 0 {
		rep.warnf("spec.rollout.stages", "empty: every cluster is in one stage, all (list stages, or remove the field to say so)")
	}
	seen := map[string]int{}
	for i, s := range ro.Stages {
		field := fmt.Sprintf("spec.rollout.stages[%d]", i)
		checkStageName(rep, field+".name", s.Name, seen, i)
		checkSelector(rep, field+".clusterSelector", s.ClusterSelector)
		if s.ClusterSelector.IsEmpty() {
			rep.errorf(field+".clusterSelector", "required: a stage holds the clusters it selects (the clusters no stage selects go last on their own)")
		}
		checkMaxUpdate(rep, field+".maxUpdate", s.MaxUpdate)
		checkDuration(rep, field+".soak", s.Soak)
	}
	for i, w := range ro.Windows {
		checkWindow(rep, fmt.Sprintf("spec.rollout.windows[%d]", i), w)
	}
}

func checkStageName(rep report, field, name string, seen map[string]int, i int) {
	if name == "" {
		rep.errorf(field, "required")
		return
	}
	for _, msg := range validation.IsDNS1123Label(name) {
		rep.errorf(field, "%q: %s", name, msg)
	}
	if first, dup := seen[name]; dup {
		rep.errorf(field, "%q is already the name of spec.rollout.stages[%d]", name, first)
		return
	}
	seen[name] = i
}

func checkMaxUpdate(rep report, field string, m *MaxUpdate) {
	switch {
	case m == nil:
	case m.IsPercent && (m.Percent < 1 || m.Percent > 100):
		rep.errorf(field, "%s: a percent is from 1%% to 100%%", m)
	case !m.IsPercent && m.Count < 1:
		rep.errorf(field, "%s: at least 1 cluster must be able to update", m)
	}
}

func checkWindow(rep report, field string, w RolloutWindow) {
	for i, d := range w.Days {
		if !slices.Contains(Weekdays, d) {
			rep.errorf(fmt.Sprintf("%s.days[%d]", field, i), "%q is not one of Mon, Tue, Wed, Thu, Fri, Sat, Sun", d)
		}
	}
	if w.Hours != "" {
		if _, _, err := ParseHours(w.Hours); err != nil {
			rep.errorf(field+".hours", "%v", err)
		}
	}
	if w.TimeZone != "" {
		if _, err := time.LoadLocation(w.TimeZone); err != nil {
			rep.errorf(field+".timeZone", "%q is not a known time zone (an IANA name such as Europe/Paris)", w.TimeZone)
		}
	}
}
