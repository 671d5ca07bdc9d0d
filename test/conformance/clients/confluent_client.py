#!/usr/bin/env python3
"""confluent-kafka (librdkafka) client for kproxy's conformance suite.

usage: confluent_client.py COMMAND --bootstrap HOST:PORT [options]

Commands (each prints one JSON object on stdout; exit 1 on any error):
  roundtrip  produce --records N keyed records (idempotent, acks=all), then
             consume them with group --group; prints what was consumed
  produce    produce --records N keyed records from --start (optionally in
             one transaction: --transactional-id ID --end commit|abort), or
             with --stdin the records read from stdin, one JSON object a
             line: {"k": KEY, "v": VALUE, "h": [[HEADER, VALUE], ...]} (a null
             "v" is a tombstone)
  consume    consume --count N records with group --group (or, without a
             group, every partition from the beginning), commit, close
  share      consume --count N records in share group --group (KIP-932;
             the group must start at the earliest offset), then close
  stream-produce  produce --rate records/s (idempotent, acks=all) until
             stdin closes; prints the acked values
  stream-consume  consume with group --group until SIGTERM, printing one
             JSON line per record as it arrives
  quota-produce  produce --size-byte records (no compression, acks=all,
             idempotent) as fast as the client can until stdin closes;
             prints the acks, errors and what throttle_cb reported
  quota-consume  consume --count N records from the start of every
             partition (no group); prints a trace of [time, bytes] and what
             throttle_cb reported
  admin      create/describe/alter-config/add-partitions/delete a topic,
             describe and delete a group; prints what it saw
  metadata   list_topics, describe_cluster and the coordinator of --group:
             every broker address the client was told
  lm-produce  produce the plan read from stdin with records up to 500 MiB
             (idempotent, acks=all; transactional with --transactional-id):
             a line "KEY SIZE" per record, its value SIZE random bytes and
             its header lm-key=KEY, and "commit" or "abort" ending a
             transaction; prints each record's key, size and SHA-256
  lm-consume  consume --count N records up to 500 MiB from the start of
             partition 0 (--isolation); prints each one's key, size,
             SHA-256 and headers

Records are KEY=PREFIX-kNN, VALUE=PREFIX-NNNNNN (the Go tests' scheme).
Consumed records are printed with their headers ("h", as on stdin).
--compression CODEC sets the producer's compression.type (default none).
--security CA_FILE:USER:PASSWORD switches to SASL_SSL with SCRAM-SHA-512;
--oauth CA_FILE TOKEN_URL CLIENT_ID CLIENT_SECRET to SASL_SSL with
OAUTHBEARER, librdkafka fetching tokens itself (sasl.oauthbearer.method=oidc,
client-credentials grant). produce --allow-errors reports failed deliveries
in its JSON ("errors") instead of failing.
--debug adds librdkafka's debug=broker log (every connection) to stderr.
"""
import argparse
import json
import sys
import time

import confluent_kafka
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry,
                                   ConfigResource, NewPartitions, NewTopic)

NUM_KEYS = 24


def base_conf(a):
    conf = {"bootstrap.servers": a.bootstrap, "client.id": a.client_id}
    if a.security:
        ca, user, password = a.security.split(":", 2)
        conf.update({"security.protocol": "SASL_SSL", "ssl.ca.location": ca,
                     "sasl.mechanisms": "SCRAM-SHA-512", "sasl.username": user, "sasl.password": password})
    if a.oauth:
        ca, token_url, client_id, client_secret = a.oauth
        conf.update({"security.protocol": "SASL_SSL", "ssl.ca.location": ca,
                     "sasl.mechanisms": "OAUTHBEARER", "sasl.oauthbearer.method": "oidc",
                     "sasl.oauthbearer.token.endpoint.url": token_url,
                     "sasl.oauthbearer.client.id": client_id,
                     "sasl.oauthbearer.client.secret": client_secret,
                     "sasl.oauthbearer.scope": "kafka"})
    if a.debug:
        conf["debug"] = "broker"
    return conf


def records(prefix, start, n):
    return [(f"{prefix}-k{i % NUM_KEYS:02d}", f"{prefix}-{i:06d}") for i in range(start, start + n)]


def produce(a, recs):
    conf = base_conf(a)
    conf.update({"enable.idempotence": True, "acks": "all", "linger.ms": 5,
                 "compression.type": a.compression})
    if a.transactional_id:
        conf["transactional.id"] = a.transactional_id
    p = Producer(conf)
    errors, acked = [], [0]

    def report(err, msg):
        if err is not None:
            errors.append(str(err))
        else:
            acked[0] += 1

    if a.transactional_id:
        p.init_transactions(30)
        p.begin_transaction()
    for k, v, *h in recs:
        while True:
            try:
                p.produce(a.topic, key=k, value=v, headers=h[0] if h else None, on_delivery=report)
                break
            except BufferError:
                p.poll(0.1)
        p.poll(0)
    left = p.flush(60)
    if a.transactional_id:
        if a.end == "abort":
            p.abort_transaction(30)
        else:
            p.commit_transaction(30)
    if a.allow_errors:
        return {"produced": len(recs), "acked": acked[0], "errors": errors, "unflushed": left}
    if left or errors or acked[0] != len(recs):
        raise RuntimeError(f"produce: {acked[0]} of {len(recs)} acked, {left} not flushed, errors {errors[:5]}")
    return {"produced": len(recs), "acked": acked[0]}


def consume(a, count):
    conf = base_conf(a)
    conf.update({"enable.auto.commit": False, "auto.offset.reset": "earliest",
                 "isolation.level": a.isolation, "fetch.wait.max.ms": 200})
    grouped = bool(a.group)
    if grouped:
        conf["group.id"] = a.group
        conf["group.protocol"] = a.group_protocol
    else:
        conf["group.id"] = "unused-" + str(time.time())  # required by librdkafka; assign() joins nothing
    c = Consumer(conf)
    if grouped:
        c.subscribe([a.topic])
    else:
        md = c.list_topics(a.topic, timeout=20)
        parts = md.topics[a.topic].partitions
        c.assign([TopicPartition(a.topic, p, confluent_kafka.OFFSET_BEGINNING) for p in parts])
    got = []
    deadline = time.time() + a.timeout
    while len(got) < count:
        if time.time() > deadline:
            c.close()
            raise RuntimeError(f"consume: {len(got)} of {count} records in {a.timeout}s")
        msgs = c.consume(num_messages=500, timeout=0.5)
        for m in msgs:
            if m.error():
                if m.error().code() == confluent_kafka.KafkaError._PARTITION_EOF:
                    continue
                raise KafkaException(m.error())
            v = m.value()  # None: a tombstone, printed as null
            got.append({"p": m.partition(), "o": m.offset(), "k": m.key().decode(), "v": v.decode() if v is not None else None,
                        "h": [[k, hv.decode()] for k, hv in m.headers() or []]})
    if grouped:
        c.commit(asynchronous=False)
    c.close()
    return {"consumed": len(got), "records": got}


def share(a, count):
    conf = base_conf(a)
    conf.update({"group.id": a.group})
    c = confluent_kafka.ShareConsumer(conf)
    c.subscribe([a.topic])
    got = []
    distinct = set()  # share groups deliver at least once: count records, not deliveries
    deadline = time.time() + a.timeout
    while len(distinct) < count:
        if time.time() > deadline:
            c.close()
            raise RuntimeError(f"share consume: {len(distinct)} of {count} records ({len(got)} deliveries) in {a.timeout}s")
        for m in c.poll(0.5):  # implicit mode: accepted on the next poll or close
            if m.error():
                raise KafkaException(m.error())
            got.append({"p": m.partition(), "o": m.offset(), "k": m.key().decode(), "v": m.value().decode()})
            distinct.add((m.key(), m.value()))
    c.close()
    return {"consumed": len(got), "records": got}


def stream_produce(a):
    """Produces PREFIX-N records at --rate per second until stdin closes."""
    import threading
    conf = base_conf(a)
    conf.update({"enable.idempotence": True, "acks": "all", "linger.ms": 5,
                 "delivery.timeout.ms": 120000})
    p = Producer(conf)
    acked, errors = [], []

    def report(err, msg):
        if err is not None:
            errors.append(str(err))
        else:
            acked.append(msg.value().decode())

    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    i, step, tick = a.start, max(1, a.rate // 10), time.time()
    while not stop.is_set():
        for k, v in records(a.prefix, i, step):
            p.produce(a.topic, key=k, value=v, on_delivery=report)
        i += step
        tick += 0.1
        while True:  # serve delivery reports until the next tick
            p.poll(max(0.0, tick - time.time()))
            if time.time() >= tick:
                break
    left = p.flush(120)
    return {"sent": i - a.start, "acked": acked, "errors": errors[:20], "error_count": len(errors), "unflushed": left}


def stream_consume(a):
    """Consumes with group --group until SIGTERM; one JSON line per record."""
    import signal
    conf = base_conf(a)
    conf.update({"group.id": a.group, "auto.offset.reset": "earliest", "fetch.wait.max.ms": 200})
    c = Consumer(conf)
    c.subscribe([a.topic])
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    while not stop:
        for m in c.consume(num_messages=500, timeout=0.5):
            if m.error():
                print(json.dumps({"error": str(m.error())}), flush=True)
                continue
            print(json.dumps({"p": m.partition(), "o": m.offset(), "v": m.value().decode()}), flush=True)
    c.close()
    return {"closed": True}


class Throttles:
    """What librdkafka's throttle_cb reported (served by poll/consume)."""

    def __init__(self):
        self.events, self.total_ms, self.max_ms = 0, 0.0, 0.0

    def __call__(self, ev):
        ms = ev.throttle_time * 1000
        self.events += 1
        self.total_ms += ms
        self.max_ms = max(self.max_ms, ms)

    def report(self):
        return {"throttle_events": self.events, "throttle_total_ms": round(self.total_ms), "throttle_max_ms": round(self.max_ms)}


def quota_produce(a):
    """Produces --size-byte records as fast as it can until stdin closes."""
    import os
    import threading
    throttles = Throttles()
    conf = base_conf(a)
    conf.update({"enable.idempotence": True, "acks": "all", "compression.type": "none",
                 "delivery.timeout.ms": 120000, "throttle_cb": throttles,
                 # 8 MB queued at most (default 1 GB): what is queued when
                 # stdin closes is flushed under the quota too.
                 "queue.buffering.max.kbytes": 8192, "batch.size": a.batch_bytes})
    p = Producer(conf)
    acked, errors = [0], []

    def report(err, msg):
        if err is not None:
            errors.append(str(err))
        else:
            acked[0] += 1

    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    payloads = [os.urandom(a.size) for _ in range(64)]  # incompressible
    i = 0
    while not stop.is_set():
        try:
            p.produce(a.topic, value=payloads[i % len(payloads)], on_delivery=report)
            i += 1
        except BufferError:  # the client's queue is full: it is being throttled
            p.poll(0.05)
        p.poll(0)
    left = p.flush(120)
    out = {"sent": i, "acked": acked[0], "errors": errors[:20], "error_count": len(errors), "unflushed": left}
    out.update(throttles.report())
    return out


def quota_consume(a):
    """Consumes --count records from the start of every partition."""
    throttles = Throttles()
    conf = base_conf(a)
    conf.update({"group.id": "unused-" + str(time.time()), "enable.auto.commit": False,
                 "throttle_cb": throttles, "fetch.max.bytes": a.fetch_bytes,
                 "max.partition.fetch.bytes": a.partition_fetch_bytes,
                 "message.max.bytes": min(a.fetch_bytes, 1000000)})  # librdkafka: fetch.max.bytes >= message.max.bytes
    c = Consumer(conf)
    parts = c.list_topics(a.topic, timeout=20).topics[a.topic].partitions
    c.assign([TopicPartition(a.topic, p, confluent_kafka.OFFSET_BEGINNING) for p in parts])
    seen, size, trace = set(), 0, [[time.time(), 0]]
    deadline = time.time() + a.timeout
    while len(seen) < a.count and time.time() < deadline:
        for m in c.consume(num_messages=500, timeout=0.2):
            if m.error():
                raise KafkaException(m.error())
            seen.add((m.partition(), m.offset()))
            size += len(m.value())
        trace.append([time.time(), size])
    c.close()
    out = {"consumed": len(seen), "bytes": size, "trace": trace}
    out.update(throttles.report())
    return out


# Large records (lm-produce, lm-consume): librdkafka's settings for
# records up to 500 MiB, as docs/large-messages.md ("Client settings")
# lists them. LM_REQUEST_BYTES is the largest record plus its batch's
# framing.
LM_REQUEST_BYTES = 600 * 1024 * 1024
LM_PRODUCER = {
    "message.max.bytes": LM_REQUEST_BYTES,  # the largest request, hence record (librdkafka's limit: 1000000000)
    "batch.size": LM_REQUEST_BYTES,  # a batch may hold the largest record
    "queue.buffering.max.kbytes": 2 * LM_REQUEST_BYTES // 1024,  # room to queue it
    # kproxy uploads the value before it answers: wait longer than 30 s
    "request.timeout.ms": 300000, "socket.timeout.ms": 300000, "message.timeout.ms": 600000,
    "transaction.timeout.ms": 600000,  # librdkafka: at least message.timeout.ms (the broker allows 900000)
}
LM_CONSUMER = {
    "fetch.max.bytes": LM_REQUEST_BYTES, "max.partition.fetch.bytes": LM_REQUEST_BYTES,
    "message.max.bytes": LM_REQUEST_BYTES,  # fetch.max.bytes may not be below it
    "receive.message.max.bytes": LM_REQUEST_BYTES + 1024 * 1024,  # the largest response read
    "queued.max.messages.kbytes": 2 * LM_REQUEST_BYTES // 1024,  # the prefetch queue holds one
    "socket.timeout.ms": 300000,  # kproxy downloads the value before it answers
}


def lm_produce(a):
    import hashlib
    import os
    conf = base_conf(a)
    conf.update({"enable.idempotence": True, "acks": "all", "linger.ms": 5, "compression.type": "none"})
    conf.update(LM_PRODUCER)
    if a.transactional_id:
        conf["transactional.id"] = a.transactional_id
    p = Producer(conf)
    errors = []

    def report(err, msg):
        if err is not None:
            errors.append(f"{msg.key()}: {err}")

    if a.transactional_id:
        p.init_transactions(60)
    out, in_txn = [], False
    for line in sys.stdin:
        f = line.split()
        if f == ["commit"]:
            p.commit_transaction(300)
            in_txn = False
            continue
        if f == ["abort"]:
            p.abort_transaction(300)
            in_txn = False
            continue
        key, size = f[0], int(f[1])
        if a.transactional_id and not in_txn:
            p.begin_transaction()
            in_txn = True
        value = os.urandom(size)
        p.produce(a.topic, key=key, value=value, headers=[("lm-key", key)], on_delivery=report)
        if p.flush(600) or errors:  # one record at a time: one value in memory
            raise RuntimeError(f"produce {key}: not delivered: {errors}")
        out.append({"k": key, "n": size, "sha256": hashlib.sha256(value).hexdigest()})
        del value
    return {"records": out}


def lm_consume(a):
    import hashlib
    conf = base_conf(a)
    conf.update({"group.id": "unused-" + str(time.time()), "enable.auto.commit": False,
                 "isolation.level": a.isolation, "fetch.wait.max.ms": 200})
    conf.update(LM_CONSUMER)
    c = Consumer(conf)
    c.assign([TopicPartition(a.topic, 0, confluent_kafka.OFFSET_BEGINNING)])
    got = []
    deadline = time.time() + a.timeout
    while len(got) < a.count:
        if time.time() > deadline:
            c.close()
            raise RuntimeError(f"consume: {len(got)} of {a.count} records in {a.timeout}s")
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            raise KafkaException(m.error())
        v = m.value() or b""
        got.append({"k": m.key().decode(), "n": len(v), "sha256": hashlib.sha256(v).hexdigest(),
                    "h": [[k, hv.decode()] for k, hv in m.headers() or []]})
        del m, v
    c.close()
    return {"records": got}


def admin(a):
    ad = AdminClient(base_conf(a))
    t, g = a.topic, a.group
    out = {}
    wait(ad.create_topics([NewTopic(t, num_partitions=3, replication_factor=-1)]))
    for _ in range(100):  # metadata reaches every broker a moment later
        md = ad.list_topics(t, timeout=10)
        if t in md.topics and not md.topics[t].error and len(md.topics[t].partitions) == 3:
            break
        time.sleep(0.1)
    desc = wait(ad.describe_topics(confluent_kafka.TopicCollection([t])))[t]
    out["describe_partitions"] = len(desc.partitions)
    out["describe_leaders"] = [{"id": p.leader.id, "host": p.leader.host, "port": p.leader.port} for p in desc.partitions]
    res = ConfigResource(ConfigResource.Type.TOPIC, t, incremental_configs=[
        ConfigEntry("retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET)])
    wait(ad.incremental_alter_configs([res]))
    for _ in range(75):  # brokers apply config changes from the metadata log
        cfg = wait(ad.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, t)]))
        out["retention.ms"] = list(cfg.values())[0]["retention.ms"].value
        if out["retention.ms"] == "3600000":
            break
        time.sleep(0.2)
    wait(ad.create_partitions([NewPartitions(t, 4)]))
    # Brokers learn of the new partitions from the metadata log, each at
    # its own pace: wait until one says 4.
    for _ in range(100):
        out["partitions_after_add"] = len(ad.list_topics(t, timeout=10).topics[t].partitions)
        if out["partitions_after_add"] == 4:
            break
        time.sleep(0.1)
    # A group with commits, then describe and delete it.
    a.records, a.start, a.prefix = 100, 0, "admin"
    produce(a, records("admin", 0, 100))
    consume(a, 100)
    listed = ad.list_consumer_groups().result(30)
    out["group_listed"] = any(x.group_id == g for x in listed.valid)
    gd = wait(ad.describe_consumer_groups([g]))[g]
    out["group_state"] = str(gd.state)
    out["coordinator"] = {"id": gd.coordinator.id, "host": gd.coordinator.host, "port": gd.coordinator.port}
    wait(ad.delete_consumer_groups([g]))
    wait(ad.delete_topics([t]))
    for _ in range(100):
        out["topic_deleted"] = t not in ad.list_topics(timeout=10).topics
        if out["topic_deleted"]:
            break
        time.sleep(0.1)
    return out


def metadata(a):
    ad = AdminClient(base_conf(a))
    md = ad.list_topics(timeout=20)
    out = {"brokers": [{"id": b.id, "host": b.host, "port": b.port} for b in md.brokers.values()],
           "orig_broker_name": md.orig_broker_name}
    cl = ad.describe_cluster().result(30)
    out["cluster_nodes"] = [{"id": n.id, "host": n.host, "port": n.port} for n in cl.nodes]
    out["controller"] = {"id": cl.controller.id, "host": cl.controller.host, "port": cl.controller.port} if cl.controller else None
    if a.topic:
        tmd = ad.list_topics(a.topic, timeout=20).topics[a.topic]
        out["leaders"] = sorted({p.leader for p in tmd.partitions.values()})
    if a.group:
        gd = wait(ad.describe_consumer_groups([a.group]))[a.group]
        out["coordinator"] = {"id": gd.coordinator.id, "host": gd.coordinator.host, "port": gd.coordinator.port}
    return out


def wait(futures):
    """Waits for a dict of futures and returns their results by key."""
    return {k: f.result(30) for k, f in futures.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=["roundtrip", "produce", "consume", "share", "stream-produce", "stream-consume", "quota-produce", "quota-consume", "admin", "metadata", "lm-produce", "lm-consume", "version"])
    ap.add_argument("--bootstrap", default="")
    ap.add_argument("--topic", default="")
    ap.add_argument("--group", default="")
    ap.add_argument("--group-protocol", default="classic", choices=["classic", "consumer"])
    ap.add_argument("--isolation", default="read_uncommitted", choices=["read_uncommitted", "read_committed"])
    ap.add_argument("--records", type=int, default=2000)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--prefix", default="confluent")
    ap.add_argument("--count", type=int, default=0)
    ap.add_argument("--transactional-id", default="")
    ap.add_argument("--end", default="commit", choices=["commit", "abort"])
    ap.add_argument("--timeout", type=float, default=90)
    ap.add_argument("--rate", type=int, default=300)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--batch-bytes", type=int, default=1000000)
    ap.add_argument("--fetch-bytes", type=int, default=52428800)
    ap.add_argument("--partition-fetch-bytes", type=int, default=1048576)
    ap.add_argument("--client-id", default="kproxy-conformance-confluent")
    ap.add_argument("--security", default="")
    ap.add_argument("--oauth", nargs=4, metavar=("CA_FILE", "TOKEN_URL", "CLIENT_ID", "CLIENT_SECRET"))
    ap.add_argument("--allow-errors", action="store_true")
    ap.add_argument("--stdin", action="store_true")
    ap.add_argument("--compression", default="none", choices=["none", "gzip", "snappy", "lz4", "zstd"])
    ap.add_argument("--debug", action="store_true")
    a = ap.parse_args()
    if a.command == "version":
        out = {"confluent_kafka": confluent_kafka.version()[0], "librdkafka": confluent_kafka.libversion()[0]}
    elif a.command == "roundtrip":
        recs = records(a.prefix, a.start, a.records)
        out = produce(a, recs)
        out.update(consume(a, a.records))
        got = {(r["k"], r["v"]) for r in out["records"]}
        out["missing"] = sum(1 for r in recs if r not in got)
        out["duplicates"] = len(out["records"]) - len(got)
    elif a.command == "produce" and a.stdin:
        out = produce(a, [(r["k"], r["v"], [tuple(h) for h in r.get("h") or []]) for r in map(json.loads, sys.stdin)])
    elif a.command == "produce":
        out = produce(a, records(a.prefix, a.start, a.records))
    elif a.command == "consume":
        out = consume(a, a.count)
    elif a.command == "stream-produce":
        out = stream_produce(a)
    elif a.command == "stream-consume":
        out = stream_consume(a)
    elif a.command == "quota-produce":
        out = quota_produce(a)
    elif a.command == "quota-consume":
        out = quota_consume(a)
    elif a.command == "share":
        out = share(a, a.count)
    elif a.command == "admin":
        out = admin(a)
    elif a.command == "lm-produce":
        out = lm_produce(a)
    elif a.command == "lm-consume":
        out = lm_consume(a)
    else:
        out = metadata(a)
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # report any failure as one line, exit 1
        print(f"confluent_client: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
