// Threads starts N sleeping threads (default 200) and exits by itself after
// 60 s: the JVM toll's probe-cost benchmark samples.
public class Threads {
    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        for (int i = 0; i < n; i++) {
            Thread t = new Thread(() -> {
                try { Thread.sleep(120_000); } catch (InterruptedException e) { }
            });
            t.setDaemon(true);
            t.start();
        }
        System.out.println("started " + n);
        Thread.sleep(60_000);
    }
}
