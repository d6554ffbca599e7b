package fleetkit.sample;

import java.util.function.Supplier;
import java.util.List;

record Point(int x, int y) {
    static final int Origin = 0;
    Point {
        if (x < 0) throw new IllegalArgumentException();
    }
    int sum() { return x+y; }
}

class Modern {
    String text = """
        hello "world"
        """;
    int kind(Object o) {
        if (o instanceof String s && !s.isEmpty()) { return 1; }
        int r = switch (o.hashCode()) {
            case 1, 2 -> 3;
            case 4 -> { yield 5; }
            default -> throw new IllegalStateException();
        };
        Supplier<int[]> sup = int[]::new;
        List<String>[] lists = null;
        var list = List.<String>of("a");
        int i = 0; i++; i--;
        for (int j = 0, k = 1; j < k; j++, k--) { i++; }
        char c = '\u0041', d = '\'';
        long big = 0x7fff_ffffL + 0b1010 + 017 + 1_000;
        double e = 1.5e-3 + .5 + 1.f + 0x1.8p1;
        return r > 1 ? i : (int) c;
    }
    <T extends Comparable<? super T>> T max(List<? extends T> xs) { return xs.get(0); }
}
