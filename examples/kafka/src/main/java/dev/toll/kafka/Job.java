package dev.toll.kafka;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A fixed amount of Kafka work, toll's job: produce N messages of S bytes to
 * a fresh topic, then consume them all, and exit. It prints the time each
 * half took and, scaled, per million messages (toll reads them with
 * log_metrics):
 *
 * <pre>
 * produce_s 1.234
 * produce_per_million_s 61.7
 * consume_s 0.987
 * consume_per_million_s 49.35
 * </pre>
 *
 * Usage: Job BOOTSTRAP MESSAGES [SIZE]
 */
public final class Job {
    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: Job BOOTSTRAP MESSAGES [SIZE]");
            System.exit(2);
        }
        String bootstrap = args[0];
        int n = Integer.parseInt(args[1]);
        int size = args.length > 2 ? Integer.parseInt(args[2]) : 100;
        String topic = "toll-" + UUID.randomUUID();

        Properties admin = new Properties();
        admin.put("bootstrap.servers", bootstrap);
        try (Admin a = Admin.create(admin)) {
            a.createTopics(Collections.singleton(new NewTopic(topic, 1, (short) 1))).all().get();
        }

        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        pp.put(ProducerConfig.ACKS_CONFIG, "1");
        pp.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        byte[] value = new byte[size];
        long t0 = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(pp)) {
            for (int i = 0; i < n; i++) {
                p.send(new ProducerRecord<>(topic, value));
            }
            p.flush();
        }
        double produce = (System.nanoTime() - t0) / 1e9;

        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        // No consumer group: the partition is assigned, not subscribed, so
        // the job needs no group coordinator (whose offsets topic a fresh
        // broker creates on first use, slowly on a busy machine).
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        long t1 = System.nanoTime();
        long got = 0, bytes = 0;
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(cp)) {
            List<TopicPartition> parts = List.of(new TopicPartition(topic, 0));
            c.assign(parts);
            c.seekToBeginning(parts);
            long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
            while (got < n) {
                if (System.nanoTime() > deadline) {
                    System.err.printf("consumed only %d of %d messages in 5 minutes%n", got, n);
                    System.exit(1);
                }
                ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(500));
                for (ConsumerRecord<byte[], byte[]> r : rs) {
                    got++;
                    bytes += r.value().length;
                }
            }
        }
        double consume = (System.nanoTime() - t1) / 1e9;
        if (bytes != (long) n * size) {
            System.err.printf("consumed %d bytes, want %d%n", bytes, (long) n * size);
            System.exit(1);
        }
        System.out.printf("messages %d%n", n);
        System.out.printf("produce_s %.4f%n", produce);
        System.out.printf("produce_per_million_s %.4f%n", produce * 1e6 / n);
        System.out.printf("consume_s %.4f%n", consume);
        System.out.printf("consume_per_million_s %.4f%n", consume * 1e6 / n);
    }
}
