import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

// A tiny HTTP service for toll's tests: GET / answers "ok" after a little
// work, and after allocating its third argument's bytes of garbage (none
// by default). It exits by itself after 120 s (or its second argument's
// seconds) so a test can never leave it behind.
public class Hello {
    public static void main(String[] args) throws Exception {
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[0])), 128);
        int garbage = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        s.createContext("/", ex -> {
            byte[][] g = new byte[garbage / 1024][];
            for (int i = 0; i < g.length; i++) g[i] = new byte[1024];
            double x = g.length;
            for (int i = 1; i < 20000; i++) x += Math.log(i);
            byte[] b = ("ok " + (x > 0) + "\n").getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, b.length);
            ex.getResponseBody().write(b);
            ex.close();
        });
        s.start();
        Thread.sleep(1000L * (args.length > 1 ? Long.parseLong(args[1]) : 120));
        System.exit(0);
    }
}
