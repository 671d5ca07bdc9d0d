package wire

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// notBrokerEndpoints are the responses whose Host fields are no broker
// address a client could be sent around kproxy with, and why.
var notBrokerEndpoints = map[int16]string{
	int16(kmsg.DescribeACLs):          "ACL host patterns",
	int16(kmsg.DeleteACLs):            "ACL host patterns",
	int16(kmsg.BeginQuorumEpoch):      "KRaft controller-to-controller API, brokers do not serve it",
	int16(kmsg.EndQuorumEpoch):        "KRaft controller-to-controller API, brokers do not serve it",
	int16(kmsg.Vote):                  "KRaft controller-to-controller API, brokers do not serve it",
	int16(kmsg.FetchSnapshot):         "KRaft controller-to-controller API, brokers do not serve it",
	int16(kmsg.UpdateRaftVoter):       "sent by a controller to the KRaft leader, brokers do not serve it",
	int16(kmsg.StreamsGroupDescribe):  "Kafka Streams application endpoints, not brokers",
	int16(kmsg.StreamsGroupHeartbeat): "Kafka Streams application endpoints, not brokers",
}

// TestEndpointRowsFindEveryHost checks the table's endpoint rows against
// kmsg's types, independently of the rows: for every response and version,
// every Host field on the wire (found by filling every Host with a marker
// and looking for it in the encoding) must be visited by the row, below
// EndpointsSince none may be on the wire, and a response with Host fields
// and no row must be one listed in notBrokerEndpoints. A kmsg upgrade that
// adds an endpoint field, or an API carrying one, fails here.
func TestEndpointRowsFindEveryHost(t *testing.T) {
	for key := int16(0); key <= MaxKnownKey(); key++ {
		api, ok := APIs().API(key)
		if !ok {
			continue
		}
		for v := int16(0); v <= api.NewResponse().MaxVersion(); v++ {
			resp := api.NewResponse()
			resp.SetVersion(v)
			markers := markHosts(reflect.ValueOf(resp).Elem(), new(int), 0)
			wire := resp.AppendTo(nil)
			var onWire []string
			for _, m := range markers {
				if bytes.Contains(wire, []byte(m)) {
					onWire = append(onWire, m)
				}
			}
			name := fmt.Sprintf("%s v%d", api.Name, v)
			if !api.HasEndpoints() {
				if _, listed := notBrokerEndpoints[key]; len(onWire) > 0 && !listed {
					t.Errorf("%s: host fields %v on the wire, and the table has no endpoints for it", name, onWire)
				}
				continue
			}
			if v < api.EndpointsSince {
				if len(onWire) > 0 {
					t.Errorf("%s: below EndpointsSince %d, but hosts %v are on the wire", name, api.EndpointsSince, onWire)
				}
				continue
			}
			var visited []string
			if err := api.VisitEndpoints(resp, func(e Endpoint) error {
				visited = append(visited, *e.Host)
				return nil
			}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			slices.Sort(visited)
			slices.Sort(onWire)
			if !slices.Equal(visited, onWire) {
				t.Errorf("%s: the row visits hosts %v, the wire carries %v", name, visited, onWire)
			}
		}
	}
	for key := range notBrokerEndpoints {
		if api, _ := APIs().API(key); api.HasEndpoints() {
			t.Errorf("%s has endpoints in the table and is listed as carrying none", api.Name)
		}
	}
}

// markHosts gives every slice in v one element and every string field
// named Host a marker of its own, and returns the markers.
func markHosts(v reflect.Value, n *int, depth int) []string {
	var markers []string
	if depth > 8 {
		return nil
	}
	for i := 0; i < v.NumField(); i++ {
		f, sf := v.Field(i), v.Type().Field(i)
		if !sf.IsExported() || f.Type() == tagsType {
			continue
		}
		switch {
		case sf.Name == "Host" && f.Kind() == reflect.String:
			*n++
			m := fmt.Sprintf("marker-host-%03d", *n)
			f.SetString(m)
			markers = append(markers, m)
		case f.Kind() == reflect.Struct:
			markers = append(markers, markHosts(f, n, depth+1)...)
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
			f.Set(reflect.Append(f, newDefault(f.Type().Elem())))
			markers = append(markers, markHosts(f.Index(0), n, depth+1)...)
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct:
			f.Set(reflect.New(f.Type().Elem()))
			f.Elem().Set(newDefault(f.Type().Elem()))
			markers = append(markers, markHosts(f.Elem(), n, depth+1)...)
		}
	}
	return markers
}

// TestAPITableWith checks that a derived table adds and replaces rows and
// leaves its parent as it was, and that it refuses rows it cannot use.
func TestAPITableWith(t *testing.T) {
	base := APIs()
	metadata := rowOf(MetadataKey)
	metadata.Endpoints = nil
	extra := rowOf(MetadataKey)
	extra.Key, extra.Name = 2000, "Metadata2000"
	if _, err := base.With(extra); err == nil {
		t.Error("With accepted a row whose constructors make another key")
	}
	derived, err := base.With(metadata)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(derived.EndpointKeys(), MetadataKey) {
		t.Error("the replaced Metadata row still has endpoints")
	}
	if !slices.Contains(base.EndpointKeys(), MetadataKey) {
		t.Error("With changed its parent table")
	}
	if derived.MaxKey() != base.MaxKey() || derived.IsFlexible(MetadataKey, 9) != base.IsFlexible(MetadataKey, 9) {
		t.Error("the derived table's versions differ from its parent's")
	}
	if _, err := base.With(API{Key: -1, Name: "negative"}); err == nil {
		t.Error("With accepted a negative key")
	}
	if _, err := base.With(API{Key: 3000, Name: "no constructors"}); err == nil {
		t.Error("With accepted a row without constructors")
	}
	bad := rowOf(MetadataKey)
	bad.Endpoints = []EndpointList{{Field: "hand made"}}
	if _, err := base.With(bad); err == nil {
		t.Error("With accepted an endpoint list not made by ListOf or OneOf")
	}
}

// A row visits only responses of its own type.
func TestVisitEndpointsWrongType(t *testing.T) {
	err := rowOf(MetadataKey).VisitEndpoints(kmsg.NewPtrFetchResponse(), func(Endpoint) error { return nil })
	if !errors.Is(err, ErrWrongResponseType) {
		t.Errorf("visiting a Fetch response as Metadata: %v, want ErrWrongResponseType", err)
	}
	if err := rowOf(MetadataKey).VisitEndpoints(nil, func(Endpoint) error { return nil }); !errors.Is(err, ErrWrongResponseType) {
		t.Errorf("visiting nil: %v, want ErrWrongResponseType", err)
	}
	if err := rowOf(int16(kmsg.DescribeQuorum)).StripEndpoints(kmsg.NewPtrMetadataResponse()); !errors.Is(err, ErrWrongResponseType) {
		t.Errorf("stripping a Metadata response as DescribeQuorum: %v, want ErrWrongResponseType", err)
	}
}

// A uint16 port field refuses a port it cannot hold.
func TestPortSet(t *testing.T) {
	var p16 uint16
	if err := Uint16Port(&p16).Set(70000); err == nil {
		t.Error("a uint16 port took 70000")
	}
	if err := Uint16Port(&p16).Set(9093); err != nil || p16 != 9093 || Uint16Port(&p16).Get() != 9093 {
		t.Errorf("uint16 port: %v, %d", err, p16)
	}
	var p32 int32
	if err := Int32Port(&p32).Set(70000); err != nil || Int32Port(&p32).Get() != 70000 {
		t.Errorf("int32 port: %v, %d", err, p32)
	}
}
