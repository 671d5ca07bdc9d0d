package engine

import (
	"github.com/kproxy/kproxy/filter"
	"github.com/kproxy/kproxy/internal/wire"
	"github.com/kproxy/kproxy/protocol"
)

// rawStage is a feature of the chain that acts on the first bytes of a
// request of its key while the request may still stream, before the
// request filters read it, with state of its own per connection (in the
// pair). It may answer the request (r.owed.local), change fixed-size
// fields in place in bodyPrefix (the client reader's buffer), or ask to
// read the first bytes of the response before it is relayed (r.owed.peek).
// Nothing is decoded for it.
type rawStage struct {
	key  int16
	link filter.Link
	// request sees r, whose header is h and whose body starts with
	// bodyPrefix; an error ends the pair.
	request func(p *pair, h protocol.RequestHeader, bodyPrefix []byte, r *clientRequest) error
}

func rawStageKey(st rawStage) int16 { return st.key }

// responsePeek reads the first bytes of the response to owed, of frameLen
// bytes and next in down, before the response loop relays it: the one
// word of state a raw stage keeps per request. arg is the stage's own,
// opaque to the loops.
type responsePeek struct {
	read func(p *pair, owed *pending, down *direction, frameLen int)
	arg  string
}

// rawStages are the engine's raw stages, each for the keys it acts on.
func rawStages() []rawStage {
	guard := filter.Link{Phase: filter.PhaseAuthorize, Filter: "engine.sessionGuard"}
	return []rawStage{
		{key: wire.FetchKey, link: guard, request: (*pair).guardFetchSession},
		{key: wire.ShareFetchKey, link: guard, request: (*pair).guardShareSession},
		{key: wire.ShareAcknowledgeKey, link: guard, request: (*pair).guardShareSession},
	}
}

// rawStageLinks lists stages once per filter, in their order.
func rawStageLinks(stages []rawStage) []filter.Link {
	var links []filter.Link
	for _, st := range stages {
		if len(links) == 0 || links[len(links)-1] != st.link {
			links = append(links, st.link)
		}
	}
	return links
}

// runRawStages passes r, whose header is h and whose body starts with
// bodyPrefix, through the raw stages of its key, unless one answered it.
func (p *pair) runRawStages(h protocol.RequestHeader, bodyPrefix []byte, r *clientRequest) error {
	for _, st := range p.s.rawStages.lookup(h.APIKey) {
		if r.owed.local != nil || r.frame != nil {
			return nil
		}
		if err := st.request(p, h, bodyPrefix, r); err != nil {
			return err
		}
	}
	return nil
}

// peekResponse lets the raw stage that asked read the first bytes of the
// response to owed, of frameLen bytes, before it is relayed.
func (p *pair) peekResponse(owed *pending, down *direction, frameLen int) {
	if owed.peek.read != nil {
		owed.peek.read(p, owed, down, frameLen)
	}
}
