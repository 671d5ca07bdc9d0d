package policy

import (
	"reflect"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// What a response may reveal: every response field kmsg knows that can
// name a topic (name or id), a group or a transactional id, or that says
// what the principal may do (authorized operations) or carries free text
// (error messages). docs/policy.md lists them by API with how the policy
// handles each (revealHandling); a test keeps the list current, so a kmsg
// upgrade that adds such a field fails until it is reviewed.

// revealKind classifies a response field.
type revealKind string

const (
	revealTopic    revealKind = "topic"
	revealTopicID  revealKind = "topic id"
	revealGroup    revealKind = "group"
	revealTxnID    revealKind = "transactional id"
	revealOps      revealKind = "authorized operations"
	revealMessage  revealKind = "error message"
	revealCursor   revealKind = "cursor"
	revealRegex    revealKind = "subscription regex"
	revealResource revealKind = "resource name"
)

// revealField is one such field: its path in the response and its kind.
type revealField struct {
	path string
	kind revealKind
}

// classifyField says whether field f of struct st can reveal something,
// and what.
func classifyField(st reflect.Type, f reflect.StructField) (revealKind, bool) {
	switch {
	case topicIDField(f):
		return revealTopicID, true
	case strings.Contains(st.Name(), "Cursor") && isStringish(f.Type):
		return revealCursor, true
	case topicNameField(st, f):
		return revealTopic, true
	case !isStringish(f.Type):
		if f.Name == "AuthorizedOperations" || strings.HasSuffix(f.Name, "AuthorizedOperations") {
			return revealOps, true
		}
		return "", false
	case strings.Contains(f.Name, "Regex"):
		return revealRegex, true
	case f.Name == "ResourceName":
		return revealResource, true
	case strings.Contains(f.Name, "TransactionalID"):
		return revealTxnID, true
	case strings.Contains(f.Name, "Group") && !strings.HasSuffix(f.Name, "State") && !strings.HasSuffix(f.Name, "Type"):
		return revealGroup, true
	case f.Name == "ErrorMessage":
		return revealMessage, true
	}
	return "", false
}

// revealFields lists the classified fields of every response type kmsg
// knows, by API key.
func revealFields() map[int16][]revealField {
	out := map[int16][]revealField{}
	for key := int16(0); key <= kmsg.MaxKey; key++ {
		resp := kmsg.ResponseForKey(key)
		if resp == nil {
			continue
		}
		var fields []revealField
		var walk func(t reflect.Type, path string, seen map[reflect.Type]bool)
		walk = func(t reflect.Type, path string, seen map[reflect.Type]bool) {
			for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
				t = t.Elem()
			}
			if t.Kind() != reflect.Struct || seen[t] {
				return
			}
			seen[t] = true
			defer delete(seen, t)
			for i := 0; i < t.NumField(); i++ {
				f := t.Field(i)
				if !f.IsExported() || f.Name == "UnknownTags" {
					continue
				}
				p := path + "." + f.Name
				if kind, ok := classifyField(t, f); ok {
					fields = append(fields, revealField{path: strings.TrimPrefix(p, "."), kind: kind})
					continue
				}
				walk(f.Type, p, seen)
			}
		}
		walk(reflect.TypeOf(resp), "", map[reflect.Type]bool{})
		if len(fields) > 0 {
			out[key] = fields
		}
	}
	return out
}

// Handling shared by many APIs.
const (
	handledCluster      = "needs a cluster permission (ClusterAction, Alter or Describe on the cluster): who holds it may see every resource, as in Kafka"
	handledEcho         = "names only what the request named; denied entries never reach the upstream and are answered by kproxy with the name the client gave"
	handledByID         = "; topics asked for by id the principal may not describe: UNKNOWN_TOPIC_ID, no name (checkTopicRef)"
	handledMessagesOnly = "error messages only: the upstream's concern allowed resources; kproxy's name only what the client named"
	handledOps          = "; authorized operations are recomputed for the principal from the policy (the upstream's are kproxy's own identity's)"
)

// revealHandlings says, per API key whose response has such fields, how
// the policy keeps them to what the principal may describe.
var revealHandlings = map[int16]string{
	0:  handledEcho + handledByID,
	1:  handledEcho + handledByID + " (fetch sessions: see the fetch-session section)",
	2:  handledEcho,
	3:  "all-topics: hidden topics removed; listed topics: denied ones 29 with the client's name and a zero id" + handledByID + handledOps,
	8:  handledEcho + handledByID,
	9:  handledEcho + "; all-topics answers filtered to describable topics" + handledByID,
	10: handledEcho,
	15: "a classic consumer group whose members' protocol bytes (subscriptions, assignments) name a hidden topic: TOPIC_AUTHORIZATION_FAILED and no members" + handledOps,
	16: "groups the principal may not describe are removed (unless it may describe the cluster)",
	19: handledEcho + "; Describe is needed too, so TOPIC_ALREADY_EXISTS never reveals a hidden topic",
	20: handledEcho + handledByID,
	21: handledEcho,
	23: handledEcho,
	24: handledEcho,
	28: handledEcho + handledByID,
	32: handledEcho + " (denied resources answered by kproxy)",
	33: handledEcho,
	37: handledEcho,
	42: handledEcho,
	44: handledEcho,
	47: handledEcho,
	61: handledEcho,
	65: handledEcho + "; topics of a described transaction the principal may not describe are left out, as Kafka",
	66: "transactions the principal may not describe are removed",
	68: "a regex subscription needs Describe on every topic; an assignment naming a hidden topic is answered TOPIC_AUTHORIZATION_FAILED",
	69: "a group naming a hidden topic anywhere (subscriptions, assignments): TOPIC_AUTHORIZATION_FAILED and no members, as Kafka 4.0" + handledOps,
	75: "kproxy pages over describable topics only; cursors name describable topics or nothing; listed denied topics 29 with a zero id" + handledOps,
	76: "an assignment naming a hidden topic is answered TOPIC_AUTHORIZATION_FAILED",
	77: "as ConsumerGroupDescribe" + handledOps,
	78: handledEcho + handledByID,
	79: handledEcho + handledByID,
	88: "the partitions map names the group's topology topics, each authorized by Describe when the topology was sent",
	89: "as ConsumerGroupDescribe, counting topology topics" + handledOps,
	60: "brokers and the cluster id, as from Kafka (needs nothing)" + handledOps,
	90: handledEcho + "; a group asked for with all its topics: hidden topics left out",
	91: handledEcho,
	92: handledEcho,
}

// revealHandling is how the policy handles key's revealing fields: the
// APIs not in revealHandlings need a cluster permission or reveal only
// error messages, which are the upstream's about allowed resources or
// kproxy's, naming only what the client named.
func revealHandling(key int16) string {
	if h, ok := revealHandlings[key]; ok {
		return h
	}
	for _, e := range operationTable() {
		if int16(e.key) == key {
			if e.setup || len(e.needs) == 0 {
				return handledMessagesOnly
			}
			for _, n := range e.needs {
				if n.res != ResCluster {
					return handledMessagesOnly
				}
			}
			break
		}
	}
	return handledCluster
}
