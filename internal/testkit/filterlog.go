package testkit

// LogFilterOnFailure makes a test that fails stop kproxy and log the
// lines of filter (their "filter" field, the filter's section name) that
// the test had not read: what the filter said, without the rest of the
// log.
func (b *Binary) LogFilterOnFailure(filter string) {
	b.t.Cleanup(func() {
		if !b.t.Failed() {
			return
		}
		lines, _ := b.Stop()
		for _, l := range lines {
			if l["filter"] == filter {
				b.t.Logf("kproxy: %v", l)
			}
		}
	})
}
