package tenant

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestKafkaGoSubscription: kafka-go's JoinGroup subscription says version
// 1 but has only the version 0 fields; it is mapped (not refused with
// INCONSISTENT_GROUP_PROTOCOL) and keeps its layout.
func TestKafkaGoSubscription(t *testing.T) {
	v0 := kmsg.NewConsumerMemberMetadata()
	v0.Topics, v0.UserData = []string{"orders"}, []byte("ud")
	kafkago := v0.AppendTo(nil)
	kafkago[1] = 1 // version 1, v0 layout: as kafka-go v0.4 writes it
	m := New(Names{Topic: "team-a."})
	up, err := upConsumerMetadata(m, kafkago)
	if err != nil {
		t.Fatalf("kafka-go's subscription refused: %v", err)
	}
	want := kmsg.NewConsumerMemberMetadata()
	want.Topics, want.UserData = []string{"team-a.orders"}, []byte("ud")
	wantBytes := want.AppendTo(nil)
	wantBytes[1] = 1
	if !bytes.Equal(up, wantBytes) {
		t.Errorf("mapped subscription %x, want %x", up, wantBytes)
	}
	if down := downConsumerMetadata(m, up); !bytes.Equal(down, kafkago) {
		t.Errorf("mapped back %x, want the client's %x", down, kafkago)
	}
}
