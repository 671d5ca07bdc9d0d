import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Kafka's Java client for kproxy's large-messages conformance scenario,
 * run by Java's source launcher through test/kafka/tool.sh.
 *
 * <pre>
 * LargeMessages.java produce BOOTSTRAP TOPIC [TRANSACTIONAL_ID]
 *     produces the plan read from stdin (idempotent, acks=all): a line
 *     "KEY SIZE" per record, its value SIZE random bytes and its header
 *     lm-key=KEY, and "commit" or "abort" ending a transaction; prints
 *     "KEY SIZE SHA256" per record
 * LargeMessages.java consume BOOTSTRAP TOPIC COUNT read_committed|read_uncommitted
 *     reads COUNT records from the start of partition 0; prints
 *     "KEY SIZE SHA256 HEADERS" per record (headers k=v,k=v)
 * </pre>
 *
 * The settings are what records of up to 500 MiB need (kproxy's
 * docs/large-messages.md, "Client settings").
 */
public class LargeMessages {
    /** The largest record, 500 MiB, and its batch's framing. */
    static final int REQUEST_BYTES = 600 << 20;

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "produce" -> produce(args[1], args[2], args.length > 3 ? args[3] : "");
            case "consume" -> consume(args[1], args[2], Integer.parseInt(args[3]), args[4]);
            default -> throw new IllegalArgumentException("unknown command " + args[0]);
        }
        System.out.flush();
    }

    static void produce(String bootstrap, String topic, String txnId) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", "kproxy-conformance-java-lm");
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        p.put("compression.type", "none");
        p.put("linger.ms", "5");
        p.put("max.request.size", String.valueOf(REQUEST_BYTES)); // the largest request, hence record
        p.put("buffer.memory", String.valueOf(2L * REQUEST_BYTES)); // holds the record's batch
        // The OS's socket buffer, which grows: Java copies what is left of
        // a request at each write, so with the default 128 KiB a 500 MiB
        // request takes thousands of copies of hundreds of MiB.
        p.put("send.buffer.bytes", "-1");
        // kproxy uploads the value before it answers.
        p.put("request.timeout.ms", "300000");
        p.put("delivery.timeout.ms", "600000");
        if (!txnId.isEmpty()) {
            p.put("transactional.id", txnId);
        }
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
            if (!txnId.isEmpty()) {
                producer.initTransactions();
            }
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            boolean inTxn = false;
            for (String line; (line = in.readLine()) != null; ) {
                String[] f = line.trim().split(" ");
                if (f[0].equals("commit")) {
                    producer.commitTransaction();
                    inTxn = false;
                    continue;
                }
                if (f[0].equals("abort")) {
                    producer.abortTransaction();
                    inTxn = false;
                    continue;
                }
                if (!txnId.isEmpty() && !inTxn) {
                    producer.beginTransaction();
                    inTxn = true;
                }
                String key = f[0];
                byte[] value = new byte[Integer.parseInt(f[1])];
                ThreadLocalRandom.current().nextBytes(value);
                String sha = sha256(value);
                ProducerRecord<String, byte[]> r = new ProducerRecord<>(topic, key, value);
                r.headers().add("lm-key", key.getBytes(StandardCharsets.UTF_8));
                producer.send(r).get(); // one record at a time: one value in memory
                System.out.println(key + " " + value.length + " " + sha);
            }
        }
    }

    static void consume(String bootstrap, String topic, int count, String isolation) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", "kproxy-conformance-java-lm");
        p.put("enable.auto.commit", "false");
        p.put("isolation.level", isolation);
        p.put("fetch.max.bytes", String.valueOf(REQUEST_BYTES));
        p.put("max.partition.fetch.bytes", String.valueOf(REQUEST_BYTES));
        p.put("receive.buffer.bytes", "-1"); // the OS's socket buffer, which grows
        p.put("request.timeout.ms", "300000"); // kproxy downloads the value before it answers
        TopicPartition tp = new TopicPartition(topic, 0);
        long deadline = System.nanoTime() + Duration.ofMinutes(9).toNanos();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            int got = 0;
            while (got < count) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("consumed " + got + " of " + count + " records");
                }
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    StringBuilder hs = new StringBuilder();
                    for (Header h : r.headers()) {
                        hs.append(hs.isEmpty() ? "" : ",").append(h.key()).append('=').append(new String(h.value(), StandardCharsets.UTF_8));
                    }
                    System.out.println(r.key() + " " + r.value().length + " " + sha256(r.value()) + " " + hs);
                    got++;
                }
            }
        }
    }

    static String sha256(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }
}
