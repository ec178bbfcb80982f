package io.dlock.spring.autoconfigure;

import io.dlock.spi.AcceptedProperties;
import java.beans.PropertyDescriptor;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;

/**
 * The property names a {@code @ConfigurationProperties} class binds, read from the class itself
 * (its JavaBean properties, nested classes of dlock's own packages followed), so that the list
 * cannot drift from what the binder accepts. Names compare as Spring's binder compares them: {@code
 * dlock.wait-time}, {@code dlock.waitTime} and {@code dlock.wait_time} are the same property.
 */
final class KnownProperties {
  private final List<ConfigurationPropertyName> leaves = new ArrayList<>();

  /** Maps, collections, arrays: any name below them is a key or an index the binder accepts. */
  private final List<ConfigurationPropertyName> open = new ArrayList<>();

  /** Adds the properties {@code type} binds under {@code prefix}. */
  KnownProperties add(String prefix, Class<?> type) {
    add(ConfigurationPropertyName.of(prefix), type, 0);
    return this;
  }

  private void add(ConfigurationPropertyName prefix, Class<?> type, int depth) {
    for (PropertyDescriptor property : BeanUtils.getPropertyDescriptors(type)) {
      if (property.getReadMethod() == null || property.getName().equals("class")) {
        continue;
      }
      ConfigurationPropertyName name =
          prefix.append(DataObjectPropertyName.toDashedForm(property.getName()));
      Class<?> value = property.getPropertyType();
      if (Map.class.isAssignableFrom(value)
          || Collection.class.isAssignableFrom(value)
          || value.isArray()) {
        open.add(name);
      } else if (isNested(value) && depth < 4) {
        add(name, value, depth + 1);
      } else {
        leaves.add(name);
      }
    }
  }

  /** A group of properties of its own ({@code dlock.jdbc}), rather than one value. */
  private static boolean isNested(Class<?> type) {
    return !type.isPrimitive()
        && !type.isEnum()
        && type.getPackageName().startsWith("io.dlock.")
        && BeanUtils.getPropertyDescriptors(type).length > 1; // more than getClass()
  }

  /** Whether {@code name} is one of the properties, or a key or index below a map or list. */
  boolean contains(ConfigurationPropertyName name) {
    for (ConfigurationPropertyName leaf : leaves) {
      if (leaf.equals(name)) {
        return true;
      }
    }
    for (ConfigurationPropertyName prefix : open) {
      if (prefix.equals(name) || prefix.isAncestorOf(name)) {
        return true;
      }
    }
    return false;
  }

  /** The known property nearest to {@code name}, or null if none is near. */
  @Nullable String closest(ConfigurationPropertyName name) {
    return AcceptedProperties.closest(name.toString(), names());
  }

  /** Every known name, in dashed form. */
  List<String> names() {
    List<String> all = new ArrayList<>();
    leaves.forEach(n -> all.add(n.toString()));
    open.forEach(n -> all.add(n.toString()));
    return all;
  }
}
