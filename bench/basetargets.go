package bench

// afterOf is the target a base target is compared with: the same
// configuration on the current binary. It is "" for any other target.
func afterOf(base string) string {
	switch base {
	case TargetKproxyBase:
		return TargetKproxy
	case TargetKproxyBasePolicy:
		return TargetKproxyPolicy
	case TargetKproxyBaseVC:
		return TargetKproxyVC
	case TargetKproxyBaseQuotas:
		return TargetKproxyQuotas
	}
	return ""
}

// feature is the configuration a target runs: itself, or for a base
// target the target it is compared with.
func feature(name string) string {
	if after := afterOf(name); after != "" {
		return after
	}
	return name
}

// baseTargets are the base targets in report order.
func baseTargets() []string {
	var out []string
	for _, t := range AllTargets {
		if afterOf(t) != "" {
			out = append(out, t)
		}
	}
	return out
}
