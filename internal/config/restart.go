package config

import (
	"reflect"
	"strings"
)

// RestartNeeded names the top-level sections (by their YAML keys, or
// audit.output and audit.buffer_size) that differ between the running
// configuration and a new one, other than what a reload applies: the
// policy and audit.log_allowed (each virtual cluster's policy too). It walks every field of Config, so
// sections added later need a restart unless they are listed here.
func RestartNeeded(old, cur *Config) []string {
	var keys []string
	ov, cv := reflect.ValueOf(*old), reflect.ValueOf(*cur)
	for i := 0; i < ov.NumField(); i++ {
		f := ov.Type().Field(i)
		if !f.IsExported() { // not from the file
			continue
		}
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if key == "" {
			key = f.Name
		}
		switch key {
		case "policy":
		case "virtual_clusters":
			if !reflect.DeepEqual(withoutPolicies(old.VirtualClusters), withoutPolicies(cur.VirtualClusters)) {
				keys = append(keys, key)
			}
		case "audit":
			if auditOutput(old.Audit) != auditOutput(cur.Audit) {
				keys = append(keys, "audit.output")
			}
			if auditBuffer(old.Audit) != auditBuffer(cur.Audit) {
				keys = append(keys, "audit.buffer_size")
			}
		default:
			if !reflect.DeepEqual(ov.Field(i).Interface(), cv.Field(i).Interface()) {
				keys = append(keys, key)
			}
		}
	}
	return keys
}

func auditOutput(a *Audit) string {
	if a == nil || a.Output == "" {
		return AuditStdout
	}
	return a.Output
}

func auditBuffer(a *Audit) int {
	if a == nil || a.BufferSize == 0 {
		return DefaultAuditBufferSize
	}
	return a.BufferSize
}

// withoutPolicies is vcs with their policies left out, which a reload applies.
func withoutPolicies(vcs []VirtualCluster) []VirtualCluster {
	out := make([]VirtualCluster, len(vcs))
	for i, vc := range vcs {
		vc.Policy = nil
		out[i] = vc
	}
	return out
}
