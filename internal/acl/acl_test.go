package acl

import (
	"strings"
	"testing"
)

// flat is a name without case or separators, so Kafka's enum spelling
// (DESCRIBE_CONFIGS), its class name (DescribeConfigs) and the
// configuration's (describe_configs) compare equal.
func flat(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }

// TestOperationNamesAgreeWithKafka checks each operation's three names
// against its AclOperation code, whose names franz-go takes from Kafka's
// protocol definition: a row with a wrong code or name fails.
func TestOperationNamesAgreeWithKafka(t *testing.T) {
	ops := Operations()
	if len(ops) != 11 || ops[0] != Read || ops[len(ops)-1] != All {
		t.Fatalf("Operations() = %v, want Read .. All", ops)
	}
	codes := map[int8]Operation{}
	for _, op := range ops {
		if other, dup := codes[int8(op.Code())]; dup {
			t.Errorf("%v and %v share code %d", op, other, op.Code())
		}
		codes[int8(op.Code())] = op
		if kafka := op.Code().String(); flat(kafka) != flat(op.String()) || strings.ToLower(kafka) != op.ConfigName() {
			t.Errorf("%v: code %d is Kafka's %s; names %q, %q", op, op.Code(), kafka, op.String(), op.ConfigName())
		}
		if len(op.AppliesTo()) == 0 {
			t.Errorf("%v applies to no resource type", op)
		}
	}
	if names := strings.Join(OperationNames(), ","); names != "read,write,create,delete,alter,describe,describe_configs,alter_configs,idempotent_write,cluster_action,all" {
		t.Errorf("OperationNames() = %s", names)
	}
}

func TestParseOperation(t *testing.T) {
	for _, op := range Operations() {
		for _, s := range []string{op.ConfigName(), op.String(), strings.ToUpper(op.ConfigName()), strings.ReplaceAll(op.ConfigName(), "_", "-")} {
			if got, ok := ParseOperation(s); !ok || got != op {
				t.Errorf("ParseOperation(%q) = %v, %v; want %v", s, got, ok, op)
			}
		}
	}
	for _, s := range []string{"", "wrte", "any", "unknown", "describe configs", "create_tokens"} {
		if op, ok := ParseOperation(s); ok {
			t.Errorf("ParseOperation(%q) = %v, want no operation", s, op)
		}
	}
}

func TestResourceTypesAgreeWithKafka(t *testing.T) {
	types := ResourceTypes()
	if len(types) != int(NumResourceTypes) {
		t.Fatalf("ResourceTypes() = %v, want %d types", types, NumResourceTypes)
	}
	for i, rt := range types {
		if int(rt) != i {
			t.Errorf("ResourceTypes()[%d] = %v: tables indexed by ResourceType need them in order", i, rt)
		}
		if kafka := rt.Code().String(); flat(kafka) != flat(rt.String()) {
			t.Errorf("%v: code %d is Kafka's %s", rt, rt.Code(), kafka)
		}
		if key := rt.ConfigKey(); !strings.HasPrefix(flat(key), flat(rt.String())) {
			t.Errorf("%v: configuration key %q", rt, key)
		}
	}
	want := map[ResourceType]int16{Topic: 29, Group: 30, Cluster: 31, TransactionalID: 53}
	for rt, code := range want {
		if got := rt.DeniedCode(); got != code {
			t.Errorf("%v.DeniedCode() = %d, want %d", rt, got, code)
		}
	}
	if s := NumResourceTypes.String(); s != "ResourceType(4)" {
		t.Errorf("an invalid type prints as %q", s)
	}
}

// TestAuthorizedOperationsApply: an authorized_operations field reports
// only operations a rule can grant on the resource type.
func TestAuthorizedOperationsApply(t *testing.T) {
	for _, rt := range ResourceTypes() {
		for _, op := range rt.AuthorizedOperations() {
			applies := false
			for _, to := range op.AppliesTo() {
				applies = applies || to == rt
			}
			if !applies {
				t.Errorf("%v reports %v, which does not apply to it", rt, op)
			}
		}
	}
}
