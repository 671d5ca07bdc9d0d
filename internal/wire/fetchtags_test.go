package wire

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func fetchResponseBody(version int16, withBrokers bool) []byte {
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(version)
	for t := 0; t < 2; t++ {
		topic := kmsg.NewFetchResponseTopic()
		topic.Topic = "events"
		topic.TopicID = [16]byte{1, 2, 3}
		for p := int32(0); p < 3; p++ {
			part := kmsg.NewFetchResponseTopicPartition()
			part.Partition = p
			part.RecordBatches = bytes.Repeat([]byte{0xAB}, 100+int(p))
			part.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 7, FirstOffset: 9}}
			if p == 1 {
				part.CurrentLeader.LeaderID = 2 // a partition-level tag must not count
				part.CurrentLeader.LeaderEpoch = 5
			}
			topic.Partitions = append(topic.Partitions, part)
		}
		resp.Topics = append(resp.Topics, topic)
	}
	if withBrokers {
		resp.Brokers = []kmsg.FetchResponseBroker{{NodeID: 2, Host: "10.0.0.2", Port: 9092}}
	}
	return resp.AppendTo(nil)
}

func TestFetchResponseHasTopLevelTags(t *testing.T) {
	for v := int16(12); v <= MaxVersion(FetchKey); v++ {
		for _, withBrokers := range []bool{false, true} {
			body := fetchResponseBody(v, withBrokers)
			got, err := rowOf(FetchKey).ResponseHasTopLevelTags(v, body)
			if err != nil {
				t.Fatalf("v%d brokers=%v: %v", v, withBrokers, err)
			}
			if got != withBrokers {
				t.Errorf("v%d: has top-level tags = %v, want %v", v, got, withBrokers)
			}
			for cut := 0; cut < len(body); cut += 7 {
				if _, err := rowOf(FetchKey).ResponseHasTopLevelTags(v, body[:cut]); err == nil {
					t.Fatalf("v%d: truncated body (%d of %d bytes) accepted", v, cut, len(body))
				}
			}
		}
	}
	if got, err := rowOf(FetchKey).ResponseHasTopLevelTags(11, []byte{1, 2}); got || err != nil {
		t.Errorf("non-flexible version: got %v, %v; want false, nil", got, err)
	}
}

func FuzzFetchResponseHasTopLevelTags(f *testing.F) {
	f.Add(int16(16), fetchResponseBody(16, true))
	f.Add(int16(13), fetchResponseBody(13, false))
	f.Add(int16(12), fetchResponseBody(12, false))
	f.Fuzz(func(t *testing.T, version int16, body []byte) {
		got, err := rowOf(FetchKey).ResponseHasTopLevelTags(version, body)
		if err != nil || version < 12 || version > MaxVersion(FetchKey) {
			return
		}
		// Whatever the walker accepts, kmsg must agree on the brokers.
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(version)
		if resp.ReadFrom(body) == nil && len(resp.Brokers) > 0 && !got {
			t.Fatalf("kmsg decoded %d brokers but the walker saw no top-level tags", len(resp.Brokers))
		}
	})
}

func produceResponseBody(version int16, withBrokers bool) []byte {
	resp := kmsg.NewPtrProduceResponse()
	resp.SetVersion(version)
	for t := 0; t < 2; t++ {
		topic := kmsg.NewProduceResponseTopic()
		topic.Topic = "events"
		topic.TopicID = [16]byte{9}
		for p := int32(0); p < 3; p++ {
			part := kmsg.NewProduceResponseTopicPartition()
			part.Partition = p
			part.BaseOffset = 1000
			if p == 2 {
				msg := "not leader"
				part.ErrorCode = 6
				part.ErrorMessage = &msg
				part.ErrorRecords = []kmsg.ProduceResponseTopicPartitionErrorRecord{{RelativeOffset: 1}}
				part.CurrentLeader.LeaderID = 1 // a partition-level tag must not count
			}
			topic.Partitions = append(topic.Partitions, part)
		}
		resp.Topics = append(resp.Topics, topic)
	}
	resp.ThrottleMillis = 5
	if withBrokers {
		resp.Brokers = []kmsg.ProduceResponseBroker{{NodeID: 1, Host: "10.0.0.1", Port: 9092}}
	}
	return resp.AppendTo(nil)
}

func TestProduceResponseHasTopLevelTags(t *testing.T) {
	for v := int16(9); v <= MaxVersion(ProduceKey); v++ {
		for _, withBrokers := range []bool{false, true} {
			body := produceResponseBody(v, withBrokers)
			got, err := rowOf(ProduceKey).ResponseHasTopLevelTags(v, body)
			if err != nil {
				t.Fatalf("v%d brokers=%v: %v", v, withBrokers, err)
			}
			if got != withBrokers {
				t.Errorf("v%d: has top-level tags = %v, want %v", v, got, withBrokers)
			}
			for cut := 0; cut < len(body); cut++ {
				if _, err := rowOf(ProduceKey).ResponseHasTopLevelTags(v, body[:cut]); err == nil {
					t.Fatalf("v%d: truncated body (%d of %d bytes) accepted", v, cut, len(body))
				}
			}
		}
	}
}

func FuzzProduceResponseHasTopLevelTags(f *testing.F) {
	f.Add(int16(10), produceResponseBody(10, true))
	f.Add(int16(13), produceResponseBody(13, false))
	f.Fuzz(func(t *testing.T, version int16, body []byte) {
		got, err := rowOf(ProduceKey).ResponseHasTopLevelTags(version, body)
		if err != nil || version < 9 || version > MaxVersion(ProduceKey) {
			return
		}
		resp := kmsg.NewPtrProduceResponse()
		resp.SetVersion(version)
		if resp.ReadFrom(body) == nil && len(resp.Brokers) > 0 && !got {
			t.Fatalf("kmsg decoded %d brokers but the walker saw no top-level tags", len(resp.Brokers))
		}
	})
}
