package io.dlock.spring.autoconfigure;

import io.dlock.spring.web.LockFailureProblemDetails;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ProblemDetail;

/**
 * With {@code dlock.web.problem-details.enabled=true}, in a servlet or reactive web application:
 * locks not acquired answer as RFC 9457 problems ({@link LockFailureProblemDetails}). Opt-in, as
 * Spring Boot's {@code spring.mvc.problemdetails.enabled}: an application may map these exceptions
 * itself already.
 */
@AutoConfiguration(after = DlockAutoConfiguration.class)
@ConditionalOnWebApplication
@ConditionalOnClass(ProblemDetail.class)
@ConditionalOnBooleanProperty(name = "dlock.web.problem-details.enabled")
@EnableConfigurationProperties(DlockProperties.class)
public class DlockWebAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  LockFailureProblemDetails dlockLockFailureProblemDetails(DlockProperties properties) {
    return new LockFailureProblemDetails(
        properties.getWeb().getProblemDetails().getLockTimeoutStatus());
  }
}
