import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

// A tiny HTTP service for toll's tests: GET / answers "ok" after a little
// work. It exits by itself after 120 s so a test can never leave it behind.
public class Hello {
    public static void main(String[] args) throws Exception {
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[0])), 128);
        s.createContext("/", ex -> {
            double x = 0;
            for (int i = 1; i < 20000; i++) x += Math.log(i);
            byte[] b = ("ok " + (x > 0) + "\n").getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, b.length);
            ex.getResponseBody().write(b);
            ex.close();
        });
        s.start();
        Thread.sleep(120_000);
        System.exit(0);
    }
}
