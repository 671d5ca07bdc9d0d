import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Kafka's Java client for the transactions of kproxy's encryption
 * conformance scenario, run by Java's source launcher through
 * test/kafka/tool.sh.
 *
 * <pre>
 * EncryptionTxn.java produce BOOTSTRAP TOPIC TRANSACTIONAL_ID COMPRESSION
 *     produces the plan read from stdin with a transactional producer: a
 *     line "KEY VALUE" per record, and "commit" or "abort" ending a
 *     transaction
 * EncryptionTxn.java consume BOOTSTRAP TOPIC COUNT read_committed|read_uncommitted
 *     reads COUNT records from the start of every partition (no group);
 *     prints "PARTITION OFFSET KEY VALUE" per record
 * </pre>
 */
public class EncryptionTxn {
    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "produce" -> produce(args[1], args[2], args[3], args[4]);
            case "consume" -> consume(args[1], args[2], Integer.parseInt(args[3]), args[4]);
            default -> throw new IllegalArgumentException("unknown command " + args[0]);
        }
        System.out.flush();
    }

    static void produce(String bootstrap, String topic, String txnId, String compression) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", "kproxy-conformance-java-enc");
        p.put("transactional.id", txnId);
        p.put("transaction.timeout.ms", "30000");
        p.put("compression.type", compression);
        p.put("linger.ms", "5");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            producer.initTransactions();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            boolean inTxn = false;
            for (String line; (line = in.readLine()) != null; ) {
                String[] f = line.trim().split(" ", 2);
                switch (f[0]) {
                    case "commit" -> {
                        producer.commitTransaction();
                        inTxn = false;
                    }
                    case "abort" -> {
                        // Sent first: abortTransaction drops what is still
                        // unsent, and the aborted records are to be written.
                        producer.flush();
                        producer.abortTransaction();
                        inTxn = false;
                    }
                    default -> {
                        if (!inTxn) {
                            producer.beginTransaction();
                            inTxn = true;
                        }
                        producer.send(new ProducerRecord<>(topic, f[0], f[1]));
                    }
                }
            }
            if (inTxn) {
                throw new IllegalStateException("the plan ends inside a transaction");
            }
        }
    }

    static void consume(String bootstrap, String topic, int count, String isolation) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", "kproxy-conformance-java-enc");
        p.put("enable.auto.commit", "false");
        p.put("isolation.level", isolation);
        p.put("fetch.max.wait.ms", "200");
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (PartitionInfo pi : consumer.partitionsFor(topic)) {
                tps.add(new TopicPartition(topic, pi.partition()));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            int got = 0;
            while (got < count) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("consumed " + got + " of " + count + " records");
                }
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    System.out.println(r.partition() + " " + r.offset() + " " + r.key() + " " + r.value());
                    got++;
                }
            }
        }
    }
}
