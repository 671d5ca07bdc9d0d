package filter

// SetDefaultsThen is a Factory.Validate for a section whose type fills
// the keys the file left out (SetDefaults): it fills them before check
// runs, so that check judges the values in force and New and Reload are
// handed them, defaults included.
func SetDefaultsThen[C any, P interface {
	*C
	SetDefaults()
}](check func(cfg *C, problems *Problems)) func(cfg *C, problems *Problems) {
	return func(cfg *C, problems *Problems) {
		P(cfg).SetDefaults()
		check(cfg, problems)
	}
}
